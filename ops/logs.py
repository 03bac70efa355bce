"""Log formats. LOG_FORMAT=json: one JSON object a line (python-json-logger), for an operator's
log pipeline. Otherwise a readable line with the same fields as key=value (make run)."""

import logging

from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

RESERVED = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


def _extras(record: logging.LogRecord) -> dict:
    return {key: value for key, value in record.__dict__.items() if key not in RESERVED and value is not None}


class ReadableFormatter(logging.Formatter):
    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record):
        line = super().format(record)
        extras = _extras(record)
        extras.pop("event", None)
        return line + "".join(f" {key}={value}" for key, value in extras.items())


class JsonFormatter(_JsonFormatter):
    def __init__(self):
        super().__init__(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            timestamp=False,
        )

    def add_fields(self, log_record, record, message_dict):
        super().add_fields(log_record, record, message_dict)
        log_record.setdefault("event", record.getMessage()[:80] if record.name.startswith("agentnava") else "log")
