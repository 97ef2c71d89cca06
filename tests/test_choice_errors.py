"""A value outside a choice list gets one line that names the field, a short quote of the
value and every allowed value -- short enough for a terminal even for a 1 MB value and the
75 method names (the fault matrix's unbounded-input case allows 1,200 characters)."""
import io
from contextlib import redirect_stderr

import pytest

from flcore.algorithms.registry import METHOD_NAMES
from flcore.cli.main import main
from flcore.config.validation import CHOICE_QUOTE_LIMIT, choice
from flcore.errors import ConfigError


def test_a_choice_error_quotes_at_most_its_limit_and_lists_every_allowed_value():
    with pytest.raises(ConfigError) as error:
        choice("method", "x" * 1_000_000, ("fedavg", "fedsam"))
    message = str(error.value)
    quoted = message.split("got ", 1)[1].split("; allowed values", 1)[0]
    assert len(quoted) == CHOICE_QUOTE_LIMIT and quoted.endswith("...")
    assert message.endswith("allowed values: fedavg, fedsam")


def test_a_1_mb_method_is_one_line_under_1200_characters():
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["run", "--scale", "smoke", "--method", "x" * 1_000_000])
    text = err.getvalue()
    assert code == 2 and text.count("\n") == 1 and len(text) <= 1200
    assert all(name in text for name in METHOD_NAMES)
