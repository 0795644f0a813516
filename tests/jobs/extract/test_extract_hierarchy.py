"""Line hierarchies (CII ParentLineID / LineStatusReasonCode, UBL SubInvoiceLine) and declared profiles.

The documents are the corpus's EN16931_Einfach (two lines, 198 + 275 = 473 net) rebuilt with a
hierarchy: a GROUP line of 473 above the two, and an INFORMATION line that counts for nothing.
"""

from __future__ import annotations

import copy
from decimal import Decimal

from extract_helpers import EINVOICE
from lxml import etree

from jobs.contract.invoice import LineItem, LineStatus
from jobs.contract.status import Status
from jobs.extract import extract_document
from jobs.extract.line_tree import counted_line_sum

RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
RSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
CAC = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
EXTENDED = "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended"


def _ram(tag: str) -> str:
    return f"{{{RAM}}}{tag}"


def _cii() -> etree._Element:
    return etree.fromstring((EINVOICE / "cii" / "EN16931_Einfach.cii.xml").read_bytes())


def _set_line(
    line: etree._Element, line_id: str, parent: str | None, status: str | None, amount: str | None = None
) -> None:
    document = line.find(_ram("AssociatedDocumentLineDocument"))
    document.find(_ram("LineID")).text = line_id
    for value, tag in (
        (parent, "ParentLineID"),
        (status and "TYPE_LINE", "LineStatusCode"),
        (status, "LineStatusReasonCode"),
    ):
        if value:
            etree.SubElement(document, _ram(tag)).text = value
    if amount is not None:
        line.find(f".//{_ram('SpecifiedTradeSettlementLineMonetarySummation')}/{_ram('LineTotalAmount')}").text = amount


def cii_with_groups(group_amount: str | None = "473.00", info_amount: str = "999.00") -> bytes:
    root = _cii()
    root.find(f".//{_ram('GuidelineSpecifiedDocumentContextParameter')}/{_ram('ID')}").text = EXTENDED
    first, second = root.findall(f".//{_ram('IncludedSupplyChainTradeLineItem')}")
    group, info = copy.deepcopy(first), copy.deepcopy(first)
    _set_line(group, "G1", None, "GROUP", group_amount or "0")
    if group_amount is None:  # a group heading that states no amount of its own
        summation = group.find(f".//{_ram('SpecifiedTradeSettlementLineMonetarySummation')}")
        summation.getparent().remove(summation)
    _set_line(first, "G1.1", "G1", "DETAIL")
    _set_line(second, "G1.2", "G1", "DETAIL")
    _set_line(info, "I1", None, "INFORMATION", info_amount)
    first.addprevious(group)
    second.addnext(info)
    return etree.tostring(root)


def test_a_consistent_extended_invoice_with_group_and_detail_lines_is_processed() -> None:
    outcome = extract_document(cii_with_groups(), "extended.xml")
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons
    invoice = outcome.invoice
    assert invoice is not None and invoice.profile == "EXTENDED"
    assert [(line.lineId, line.parentLineId, line.lineStatus) for line in invoice.lineItems] == [
        ("G1", None, LineStatus.GROUP),
        ("G1.1", "G1", LineStatus.DETAIL),
        ("G1.2", "G1", LineStatus.DETAIL),
        ("I1", None, LineStatus.INFORMATION),
    ]
    # The hierarchy is kept in what result.json stores.
    assert invoice.model_dump(mode="json")["lineItems"][1]["parentLineId"] == "G1"


def test_a_group_without_its_own_amount_counts_its_details() -> None:
    outcome = extract_document(cii_with_groups(group_amount=None), "extended.xml")
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons


def test_a_group_that_disagrees_with_its_details_goes_to_review() -> None:
    # 473 at the top agrees with LineTotalAmount; the details beneath it do not add up to it.
    root = etree.fromstring(cii_with_groups())
    detail = root.findall(f".//{_ram('LineTotalAmount')}")[2]
    detail.text = "190.00"
    outcome = extract_document(etree.tostring(root), "extended.xml")
    assert outcome.validation.reasons == ["TOTALS_MISMATCH"]


def test_flat_reading_would_count_the_group_twice() -> None:
    flat = cii_with_groups().replace(b"ParentLineID", b"ParentLineIDx").replace(b"LineStatusReasonCode", b"LineStatusX")
    assert "TOTALS_MISMATCH" in extract_document(flat, "flat.xml").validation.reasons


def _ubl() -> etree._Element:
    return etree.fromstring((EINVOICE / "ubl" / "EN16931_Einfach.ubl.xml").read_bytes())


def ubl_with_sub_lines(parent_amount: str = "473") -> bytes:
    root = _ubl()
    first, second = root.findall(f"{{{CAC}}}InvoiceLine")
    parent = copy.deepcopy(first)
    parent.find(f"{{{CBC}}}LineExtensionAmount").text = parent_amount
    parent.find(f"{{{CAC}}}Item/{{{CBC}}}Name").text = "Paket"
    for index, line in enumerate((first, second), 1):
        line.tag = f"{{{CAC}}}SubInvoiceLine"
        line.find(f"{{{CBC}}}ID").text = f"1.{index}"
        parent.insert(parent.index(parent.find(f"{{{CAC}}}Item")), line)
    root.insert(len(root), parent)
    return etree.tostring(root)


def test_ubl_sub_lines_are_kept_and_counted_once() -> None:
    outcome = extract_document(ubl_with_sub_lines(), "sub.xml")
    assert outcome.validation.status is Status.PROCESSED, outcome.validation.reasons
    assert outcome.invoice is not None
    assert [(line.lineId, line.parentLineId, str(line.amount)) for line in outcome.invoice.lineItems] == [
        ("1", None, "473.00"),
        ("1.1", "1", "198.00"),
        ("1.2", "1", "275.00"),
    ]


def test_a_ubl_parent_that_is_not_the_sum_of_its_sub_lines_goes_to_review() -> None:  # BR-DEX-02
    body = ubl_with_sub_lines("473").replace(b'currencyID="EUR">198<', b'currencyID="EUR">190<')
    assert extract_document(body, "sub.xml").validation.reasons == ["TOTALS_MISMATCH"]


def test_minimum_and_basic_wl_carry_no_lines_and_that_is_no_defect() -> None:
    for guideline, profile in (("urn:factur-x.eu:1p0:minimum", "MINIMUM"), ("urn:factur-x.eu:1p0:basicwl", "BASIC-WL")):
        root = _cii()
        root.find(f".//{_ram('GuidelineSpecifiedDocumentContextParameter')}/{_ram('ID')}").text = guideline
        for line in root.findall(f".//{_ram('IncludedSupplyChainTradeLineItem')}"):
            line.getparent().remove(line)
        outcome = extract_document(etree.tostring(root), "minimum.xml")
        assert outcome.invoice is not None and outcome.invoice.profile == profile
        assert outcome.invoice.lineItems == [] and outcome.validation.status is Status.PROCESSED


def _line(line_id: str, parent: str | None, amount: str | None, status: LineStatus | None = None) -> LineItem:
    return LineItem(
        lineNumber=1,
        lineId=line_id,
        parentLineId=parent,
        lineStatus=status,
        amount=None if amount is None else Decimal(amount),
    )


def test_broken_hierarchies_never_lose_an_amount() -> None:
    tolerance = Decimal("0.01")
    # A parent that does not exist: the line counts at the top.
    assert counted_line_sum([_line("1", None, "10"), _line("2", "9", "5")], tolerance).total == Decimal(15)
    # A cycle of parents is no hierarchy: it fails the group check, so the invoice goes to review.
    assert not counted_line_sum([_line("1", "2", "10"), _line("2", "1", "5")], tolerance).groups_consistent
    assert not counted_line_sum([_line("1", "2", "10"), _line("2", "1", "10")], tolerance).groups_consistent
    # Nested groups: only the top counts; every level is checked.
    nested = [
        _line("A", None, "30", LineStatus.GROUP),
        _line("B", "A", "30", LineStatus.GROUP),
        _line("C", "B", "10"),
        _line("D", "B", "21"),
    ]
    result = counted_line_sum(nested, tolerance)
    assert (result.total, result.groups_consistent) == (Decimal(30), False)
    # A missing amount under a group without one: BR-CO-10 cannot run.
    assert counted_line_sum([_line("A", None, None, LineStatus.GROUP), _line("B", "A", None)], tolerance).total is None
