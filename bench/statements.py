"""What the benchmarks count besides time."""


class Statements:
    """Counts the statements this process sends (no cap, unlike CaptureQueriesContext's 9,000)."""

    def __init__(self, connection):
        self.connection, self.count = connection, 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)

    def __enter__(self):
        self._wrapper = self.connection.execute_wrapper(self)
        self._wrapper.__enter__()
        return self

    def __exit__(self, *exc):
        self._wrapper.__exit__(*exc)
