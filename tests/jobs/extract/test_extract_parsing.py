"""Money, number and date parsing: the table of formats users trip on, plus properties."""

from __future__ import annotations

import contextlib
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobs.extract.parsing import (
    AmbiguousDate,
    DateOrder,
    ParsedDate,
    parse_date,
    parse_money,
    parse_number,
    plain_decimal,
)


@pytest.mark.parametrize(
    ("text", "amount", "currency"),
    [
        ("1.337,50 €", "1337.50", "EUR"),
        ("€1.337,50", "1337.50", "EUR"),
        ("$1,204.50", "1204.50", "$"),
        ("1'234.50", "1234.50", None),
        ("CHF 1'234.50", "1234.50", "CHF"),
        ("1 234,56 €", "1234.56", "EUR"),
        ("1\u00a0234,56 EUR", "1234.56", "EUR"),
        ("£12", "12", "GBP"),
        ("US$ 3,000.00", "3000.00", "USD"),
        ("$-1,136.16", "-1136.16", "$"),
        ("-12,00 €", "-12.00", "EUR"),
        ("(12.00)", "-12.00", None),
        ("12.00-", "-12.00", None),
        ("38.48", "38.48", None),
        ("0,5", "0.5", None),
        ("0,500", "0.500", None),
        ("1,234", "1234", None),
        ("1.234.567,89", "1234567.89", None),
        ("1,234,567.89", "1234567.89", None),
        ("$6169.40", "6169.40", "$"),
        ("12,50 kr", "12.50", None),  # kr is NOK, SEK or DKK: it settles nothing
        ("¥1,000", "1000", None),  # JPY or CNY
        ("1.000 kr SEK", "1000", "SEK"),
    ],
)
def test_parse_money(text: str, amount: str, currency: str | None) -> None:
    money = parse_money(text)
    assert money.amount == Decimal(amount)
    assert str(money.amount) == amount  # no float round trip: the printed digits survive
    assert money.currency == currency


@pytest.mark.parametrize(
    "text",
    [
        "",
        ".",
        ",",
        "-",
        "abc",
        "$",
        "1,23,4.00",
        "1.2.3,4,5",
        "12..5",
        "1'23.00",
        "€ 12 € $",
        "NaN",
        "Infinity",
        "1e5",
        "12,34.56",
    ],
)
def test_parse_money_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_money(text)


def test_two_different_currencies_are_rejected() -> None:
    with pytest.raises(ValueError):
        parse_money("€ 12.00 USD")


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-inf", "1,5", "1e3", "", " "])
def test_plain_decimal_is_strict(text: str) -> None:
    with pytest.raises(ValueError):
        plain_decimal(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("March 15, 2026", date(2026, 3, 15)),
        ("Mar 15 2026", date(2026, 3, 15)),
        ("15 March 2026", date(2026, 3, 15)),
        ("15. März 2026", date(2026, 3, 15)),
        ("Thursday, 26 March 2020", date(2020, 3, 26)),
        ("15.03.2026", date(2026, 3, 15)),
        ("05.03.2026", date(2026, 3, 5)),  # dotted dates are day-first
        ("01-Jan-2021", date(2021, 1, 1)),
        ("01/13/17", date(2017, 1, 13)),
        ("13/01/2017", date(2017, 1, 13)),
        ("01/31/2021", date(2021, 1, 31)),
        ("2020-03-12", date(2020, 3, 12)),
        ("2020-03-12T10:00:00Z", date(2020, 3, 12)),
        ("20180605", date(2018, 6, 5)),
        ("2026/03/15", date(2026, 3, 15)),
        ("04/04/2020", date(2020, 4, 4)),  # both readings agree
    ],
)
def test_parse_date(text: str, expected: date) -> None:
    parsed = parse_date(text)
    assert isinstance(parsed, ParsedDate)
    assert parsed.value == expected


def test_day_month_order_is_reported_when_settled() -> None:
    assert parse_date("01/13/17") == ParsedDate(date(2017, 1, 13), DateOrder.MDY)
    assert parse_date("13/01/17") == ParsedDate(date(2017, 1, 13), DateOrder.DMY)


@pytest.mark.parametrize("text", ["03/04/2021", "01-02-2020", "1/2/20"])
def test_unsettled_day_month_order_is_never_guessed(text: str) -> None:
    parsed = parse_date(text)
    assert isinstance(parsed, AmbiguousDate)
    assert parsed.resolve(None) is None
    assert parsed.resolve(DateOrder.DMY) != parsed.resolve(DateOrder.MDY)


@pytest.mark.parametrize("text", ["", "soon", "31.02.2026", "2026-13-01", "13/13/2020", "March 2026", "32 March 2020"])
def test_parse_date_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_date(text)


_amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999999.99"), places=2)


def _group(whole: str, sep: str) -> str:
    parts = []
    while len(whole) > 3:
        parts.insert(0, whole[-3:])
        whole = whole[:-3]
    return sep.join([whole, *parts])


@given(
    _amounts,
    st.sampled_from([(",", "."), (".", ","), ("'", "."), (" ", ",")]),
    st.sampled_from(["{} €", "€{}", "EUR {}", "$ {}", "{}"]),
)
def test_formatted_amounts_round_trip(amount: Decimal, separators: tuple[str, str], template: str) -> None:
    group, decimal_sep = separators
    whole, frac = f"{amount:.2f}".split(".")
    text = template.format(f"{_group(whole, group)}{decimal_sep}{frac}")
    assert parse_money(text).amount == amount


@given(st.dates(min_value=date(1970, 1, 1), max_value=date(2069, 12, 31)))
def test_unambiguous_date_formats_round_trip(value: date) -> None:
    for text in (
        value.isoformat(),
        value.strftime("%d.%m.%Y"),
        value.strftime("%B %d, %Y"),
        value.strftime("%d-%b-%Y"),
        value.strftime("%Y%m%d"),
    ):
        parsed = parse_date(text)
        assert isinstance(parsed, ParsedDate) and parsed.value == value, text


@given(st.dates(min_value=date(1970, 1, 1), max_value=date(2069, 12, 31)))
def test_slashed_dates_are_either_settled_correctly_or_ambiguous(value: date) -> None:
    parsed = parse_date(value.strftime("%m/%d/%Y"))
    if isinstance(parsed, AmbiguousDate):
        assert value.day <= 12 and value.day != value.month
        assert parsed.resolve(DateOrder.MDY) == value
    else:
        assert parsed.value == value


@given(st.text(max_size=30))
def test_parsers_raise_only_value_error(text: str) -> None:
    for parse in (parse_money, parse_number, parse_date, plain_decimal):
        with contextlib.suppress(ValueError):
            parse(text)
