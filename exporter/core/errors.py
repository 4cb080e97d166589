"""The one exception the exporter turns into a one-line build error."""


class UserError(Exception):
    """A problem the user fixes in a BUILD file or in model code, stated in their terms.

    The message says what is wrong and what to change; the CLI prefixes the target label.
    """
