"""The one application error type. The API renders it as {"error": {"code", "message"}}."""


class AppError(Exception):
    status = 400

    def __init__(self, code: str, message: str, *, status: int | None = None, field: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        if status is not None:
            self.status = status


class NotFound(AppError):
    status = 404


class InvalidConfig(AppError):
    """A configuration change that is refused; nothing was saved."""

    plain = False  # the message is already in plain words: the form and the Builder say it as it is

    def __init__(self, message: str, *, field: str | None = None, code: str = "invalid_config"):
        super().__init__(code, message, field=field)
