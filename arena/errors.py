"""The error a user sees as one line: ``arena: error: <message>``.

`UserError` is for bad input the user can fix (a flag, a file, a name). The CLI wrapper
prints it without a traceback; any other exception is a bug and keeps its traceback.
"""


class UserError(Exception):
    """Bad input from the user, reported as one line naming the field or file."""
