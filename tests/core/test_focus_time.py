"""Focus-time extraction: the labelled sentence table, spans, reference dates, periods, options."""

from __future__ import annotations

import datetime as dt
import inspect
import random
import subprocess
import sys

import pytest

from tempo_eval.core import extract as extract_module
from tempo_eval.core.extract import (
    FocusTimeExtractor,
    extract_aft,
    extract_dft,
    extract_qft,
    parse_reference_date,
)
from tempo_eval.core.focus import FocusTime
from tempo_eval.core.periods import DEFAULT_PERIODS, merge_periods, normalize_period_name
from tests.support.paths import ROOT

REF = "2024-06-15"


def span(first: int, last: int) -> set[int]:
    return set(range(first, last + 1))


# (sentence, reference date, expected years). The ids say which rule each row pins down.
LABELLED = [
    # explicit years, including before 1800
    pytest.param("The cathedral was built in 1500.", None, {1500}, id="year-pre-1800"),
    pytest.param("Lehman Brothers collapsed in 2008.", None, {2008}, id="year-plain"),
    pytest.param("He was born in 1950 and died in 2020.", None, {1950, 2020}, id="two-years"),
    pytest.param("Rome fell in 476 AD.", None, {476}, id="era-suffix"),
    pytest.param("Charlemagne was crowned in AD 800.", None, {800}, id="era-prefix"),
    pytest.param("The temple dates from 800 CE.", None, {800}, id="era-ce"),
    pytest.param("Nothing is known about the year 800 here.", None, {800}, id="the-year-800"),
    pytest.param("The 2019's budget was tight.", None, {2019}, id="year-possessive"),
    pytest.param("The report (1990) is cited often.", None, {1990}, id="year-in-brackets"),
    pytest.param("In 1920 women won the vote.", None, {1920}, id="sentence-initial-In-before-noun"),
    pytest.param("Since 1999 people have moved away.", None, {1999}, id="since-before-noun"),
    pytest.param("Revenue for FY2019 rose.", None, {2019}, id="fiscal-year"),
    pytest.param("Sales rose in Q3 2019.", None, {2019}, id="quarter"),
    # hard negatives: money, counts, measures, labels, longer numbers
    pytest.param("The repair cost $2,000 in total.", None, set(), id="neg-dollars"),
    pytest.param("About 2,000 fans came.", None, set(), id="neg-thousands-comma"),
    pytest.param("The firm has 1500 employees.", None, set(), id="neg-employees"),
    pytest.param("The pipeline is 2000 km long.", None, set(), id="neg-km"),
    pytest.param("Some 1999 people signed the letter.", None, set(), id="neg-people"),
    pytest.param("The crate weighs 2020 kg.", None, set(), id="neg-kg"),
    pytest.param("A ticket costs €1500.", None, set(), id="neg-euro-sign"),
    pytest.param("The price was 1500 USD.", None, set(), id="neg-usd-after"),
    pytest.param("The fee was USD 1500.", None, set(), id="neg-usd-before"),
    pytest.param("See page 1984 of the report.", None, set(), id="neg-page"),
    pytest.param("The meeting is in room 1200.", None, set(), id="neg-room"),
    pytest.param("She won the 2000 meters race.", None, set(), id="neg-meters"),
    pytest.param("Call 555-2020 for details.", None, set(), id="neg-phone-dash"),
    pytest.param("Call (212) 555-1999 today.", None, set(), id="neg-phone-brackets"),
    pytest.param("Dial 555 2019 after noon.", None, set(), id="neg-phone-groups"),
    pytest.param("More than 2000 attended.", None, set(), id="neg-more-than"),
    pytest.param("It grew by 12.5% to 1500 units in 2.2019 terms.", None, set(), id="neg-decimal"),
    pytest.param("The data in 1500 households was lost.", None, set(), id="neg-in-households"),
    pytest.param("Temperatures were in the low 90s.", None, set(), id="neg-low-90s"),
    pytest.param("She is in her 90s now.", None, set(), id="neg-age-90s"),
    pytest.param("He was in his twenties then.", None, set(), id="neg-age-twenties"),
    pytest.param("Troy may date from 1200 BC.", None, set(), id="neg-bc-year"),
    pytest.param("The 5th century BC saw many wars.", None, set(), id="neg-bc-century"),
    pytest.param("It happened 2,000 years ago.", REF, set(), id="neg-thousands-years-ago"),
    pytest.param("Two ad agencies bid for it.", None, set(), id="neg-lowercase-ad"),
    # decades
    pytest.param("Grunge peaked in the 1990s.", None, span(1990, 1999), id="decade-1990s"),
    pytest.param("1990's fashion is back.", None, span(1990, 1999), id="decade-apostrophe-s"),
    pytest.param("Music from the '90s.", REF, span(1990, 1999), id="decade-two-digit"),
    pytest.param("90s music was loud.", REF, span(1990, 1999), id="decade-bare-90s"),
    pytest.param("Flappers of the '20s.", "2024-06-15", span(2020, 2029), id="decade-20s-ref-2024"),
    pytest.param("Flappers of the '20s.", "2015-01-01", span(1920, 1929), id="decade-20s-ref-2015"),
    pytest.param("Flappers of the '20s.", None, span(1920, 1929), id="decade-20s-no-ref"),
    pytest.param("Music from the '90s.", "1985-01-01", span(1890, 1899), id="decade-90s-ref-1985"),
    pytest.param("Life in the nineties.", None, span(1990, 1999), id="decade-word"),
    pytest.param("The nineteen-sixties were loud.", None, span(1960, 1969), id="decade-nineteen-word"),
    pytest.param("The 2000s began with a crash.", None, span(2000, 2009), id="decade-2000s"),
    pytest.param("In the early 1990s it grew.", None, span(1990, 1993), id="decade-early"),
    pytest.param("By the mid-1990s it shrank.", None, span(1994, 1996), id="decade-mid"),
    pytest.param("In the late '80s it boomed.", REF, span(1987, 1989), id="decade-late-two-digit"),
    pytest.param("The second half of the 1990s.", None, span(1995, 1999), id="decade-second-half"),
    # centuries
    pytest.param("Coal ruled the 19th century.", None, span(1800, 1899), id="century-ordinal"),
    pytest.param("Coal ruled the nineteenth century.", None, span(1800, 1899), id="century-word"),
    pytest.param("A 19th-century house.", None, span(1800, 1899), id="century-hyphen"),
    pytest.param("Coal ruled the 1800s.", None, span(1800, 1899), id="century-1800s"),
    pytest.param("The 1900s were violent.", None, span(1900, 1999), id="century-1900s"),
    pytest.param("In the early 19th century.", None, span(1800, 1833), id="century-early"),
    pytest.param("By the mid-19th century.", None, span(1834, 1866), id="century-mid"),
    pytest.param("In the late 1800s.", None, span(1867, 1899), id="century-late-1800s"),
    pytest.param("The first half of the 20th century.", None, span(1900, 1949), id="century-half"),
    pytest.param("The 18th and 19th centuries.", None, span(1700, 1899), id="century-pair"),
    pytest.param("The twenty-first century.", None, span(2000, 2099), id="century-21st"),
    # ranges
    pytest.param("The crisis ran 2008-2010.", None, span(2008, 2010), id="range-hyphen"),
    pytest.param("The crisis ran 2008–2010.", None, span(2008, 2010), id="range-en-dash"),
    pytest.param("The crisis ran 2008—2010.", None, span(2008, 2010), id="range-em-dash"),
    pytest.param("It ran from 2008 to 2010.", None, span(2008, 2010), id="range-from-to"),
    pytest.param("It ran between 2008 and 2010.", None, span(2008, 2010), id="range-between"),
    pytest.param("It ran 2008 through 2010.", None, span(2008, 2010), id="range-through"),
    pytest.param("It ran 2008 until 2010.", None, span(2008, 2010), id="range-until"),
    pytest.param("The 2008-09 season.", None, {2008, 2009}, id="range-season"),
    pytest.param("The 1999-00 season.", None, {1999, 2000}, id="range-season-century"),
    pytest.param("The 2019/20 season.", None, {2019, 2020}, id="range-season-slash"),
    pytest.param("The war of 1914-18.", None, span(1914, 1918), id="range-two-digit-end"),
    pytest.param("Filed 2020-03 in the archive.", None, {2020}, id="year-month-not-range"),
    pytest.param("A typo: 2010-2008.", None, {2008, 2010}, id="range-reversed"),
    pytest.param("The 2008 and 2012 elections.", None, {2008, 2012}, id="pair-not-range"),
    pytest.param("From 1000 to 1500 it grew.", None, {1000, 1500}, id="range-capped"),
    pytest.param("From May 2008 to June 2010.", None, span(2008, 2010), id="range-of-dates"),
    pytest.param("From the 1980s to the 2000s.", None, span(1980, 2009), id="range-of-decades"),
    pytest.param("1500 to 2000 employees joined.", None, set(), id="neg-range-of-counts"),
    # dates with a year
    pytest.param("The deal closed in May 2019.", None, {2019}, id="date-month-year"),
    pytest.param("Signed on 12 March 2020.", None, {2020}, id="date-day-month-year"),
    pytest.param("Signed on March 12, 2020.", None, {2020}, id="date-month-day-year"),
    pytest.param("Signed on the 12th of March, 2020.", None, {2020}, id="date-ordinal-of"),
    pytest.param("Logged at 2020-03-12.", None, {2020}, id="date-iso"),
    pytest.param("Logged on 12/03/2020.", None, {2020}, id="date-slashes"),
    pytest.param("Released in Sept. 2019.", None, {2019}, id="date-abbreviated"),
    pytest.param("Released in Nov '19.", REF, {2019}, id="date-two-digit-year"),
    pytest.param("Bad date 45/67/2019.", None, set(), id="neg-impossible-date"),
    # relative expressions against the reference date
    pytest.param("Prices rose last year.", "2020-06-01", {2019}, id="rel-last-year"),
    pytest.param("Prices rose this year.", "2020-06-01", {2020}, id="rel-this-year"),
    pytest.param("Prices will rise next year.", "2020-06-01", {2021}, id="rel-next-year"),
    pytest.param("It opened two years ago.", "2020-06-01", {2018}, id="rel-words-ago"),
    pytest.param("It opened 2 years ago.", "2020-06-01", {2018}, id="rel-digits-ago"),
    pytest.param("It opened a decade ago.", "2020-06-01", {2010}, id="rel-decade-ago"),
    pytest.param("It grew in the past 5 years.", "2020-06-01", span(2015, 2020), id="rel-past-n"),
    pytest.param("Over the last three years.", "2020-06-01", span(2017, 2020), id="rel-last-n-words"),
    pytest.param("It changed in the last decade.", "2020-06-01", span(2010, 2020), id="rel-last-decade"),
    pytest.param("It changed in the past decade.", "2020-06-01", span(2010, 2020), id="rel-past-decade"),
    pytest.param("Over the next five years.", "2020-06-01", span(2020, 2025), id="rel-next-n"),
    pytest.param("It was recently approved.", "2020-06-01", set(), id="rel-recently-is-vague"),
    pytest.param("Sales fell last month.", "2020-01-15", {2019}, id="rel-last-month-crosses-year"),
    pytest.param("It happened yesterday.", "2020-01-01", {2019}, id="rel-yesterday-crosses-year"),
    pytest.param("It happened last March.", "2020-02-01", {2019}, id="rel-last-named-month"),
    pytest.param("It happened last year.", None, set(), id="rel-without-reference"),
    pytest.param("The next year he moved to Paris.", "2020-06-01", set(), id="rel-narrative-next-year"),
    pytest.param("The last year of the war.", "2020-06-01", set(), id="rel-narrative-last-year-of"),
    pytest.param("This may be the last march.", "2020-06-01", set(), id="neg-modal-may-noun-march"),
    # named periods
    pytest.param("Before World War II began.", None, span(1939, 1945), id="period-ww2"),
    pytest.param("After WWII and WW2.", None, span(1939, 1945), id="period-ww2-abbrev"),
    pytest.param("During the Second World War.", None, span(1939, 1945), id="period-second-world-war"),
    pytest.param("During World War One.", None, span(1914, 1918), id="period-world-war-one"),
    pytest.param("In the First World War and WWI.", None, span(1914, 1918), id="period-ww1"),
    pytest.param("Veterans of the Great War.", None, span(1914, 1918), id="period-great-war"),
    pytest.param("Spies of the Cold War.", None, span(1947, 1991), id="period-cold-war"),
    pytest.param("Bread lines of the Great Depression.", None, span(1929, 1939), id="period-depression"),
    pytest.param("Houses of the Victorian era.", None, span(1837, 1901), id="period-victorian"),
    pytest.param("Schools closed in the COVID-19 pandemic.", None, span(2020, 2023), id="period-covid"),
    pytest.param("Schools closed during the pandemic.", None, set(), id="neg-vague-pandemic"),
    pytest.param("Banks failed in the 2008 financial crisis.", None, span(2007, 2009), id="period-gfc"),
    pytest.param("Security changed after 9/11.", None, {2001}, id="period-9-11"),
    pytest.param("Security changed on 9/11/2001.", None, {2001}, id="date-not-period-9-11"),
    pytest.param("The Y2K bug was overblown.", None, {1999, 2000}, id="period-y2k"),
    pytest.param("The dot-com bubble burst.", None, span(1995, 2001), id="period-dotcom"),
    pytest.param("Jazz in the Roaring Twenties.", None, span(1920, 1929), id="period-roaring-twenties"),
    pytest.param("Steam in the Industrial Revolution.", None, span(1760, 1840), id="period-industrial"),
]


@pytest.mark.parametrize(("sentence", "reference_date", "expected"), LABELLED)
def test_labelled_sentence_yields_expected_years(sentence, reference_date, expected):
    assert extract_qft(sentence, reference_date).years == expected


@pytest.mark.parametrize(("sentence", "reference_date", "expected"), LABELLED)
def test_every_span_points_at_its_own_text(sentence, reference_date, expected):
    focus = extract_dft(sentence, reference_date)
    for s in focus.spans:
        assert sentence[s.start : s.end] == s.text
        assert s.kind in {"year", "decade", "century", "range", "date", "relative", "period"}
        assert s.first <= s.last
    assert focus.years == set().union(*(s.years for s in focus.spans))


def test_the_labelled_table_has_at_least_eighty_sentences():
    assert len(LABELLED) >= 80


# ---------------------------------------------------------------------------------------------
# spans


def only_span(text: str, reference_date: object = None):
    spans = extract_qft(text, reference_date).spans
    assert len(spans) == 1, spans
    return spans[0]


def test_a_from_to_range_is_one_range_span_including_from():
    s = only_span("It ran from 2008 to 2010.")
    assert (s.text, s.kind, s.first, s.last, s.capped) == ("from 2008 to 2010", "range", 2008, 2010, False)


def test_a_month_and_year_is_one_date_span():
    s = only_span("The deal closed in May 2019.")
    assert (s.text, s.kind, s.first, s.last) == ("May 2019", "date", 2019, 2019)
    assert "The deal closed in May 2019."[s.start : s.end] == "May 2019"


def test_a_season_is_a_range_span():
    s = only_span("The 2008-09 season.")
    assert (s.text, s.kind, s.first, s.last) == ("2008-09", "range", 2008, 2009)


def test_a_long_range_keeps_its_end_points_and_is_flagged_capped():
    s = only_span("From 1000 to 1500 it grew.")
    assert s.capped and (s.first, s.last) == (1000, 1500)
    assert s.years == {1000, 1500}


def test_the_cap_is_configurable_and_applies_to_centuries_too():
    focus = FocusTimeExtractor(max_span_years=50).extract("The 19th century.")
    assert focus.years == {1800, 1899}
    assert focus.spans[0].capped
    assert not FocusTimeExtractor().extract("The 19th century.").spans[0].capped


def test_a_range_of_exactly_the_cap_is_not_capped():
    assert len(FocusTimeExtractor(max_span_years=300).extract("1700-2000").years) == 301
    assert FocusTimeExtractor(max_span_years=299).extract("1700-2000").years == {1700, 2000}


def test_span_kinds_name_the_rule_that_found_them():
    text = "In the early 1990s, the 19th century, World War II, last year and 12 March 2020."
    kinds = [s.kind for s in extract_qft(text, REF).spans]
    assert kinds == ["decade", "century", "period", "relative", "date"]


def test_a_modifier_is_part_of_the_span_but_the_article_is_not():
    s = only_span("In the early 1990s it grew.")
    assert s.text == "early 1990s"


def test_spans_are_in_text_order_and_do_not_overlap():
    text = "From 2008 to 2010, after the 1990s and WWII, prices rose in May 2019 (see 2020-03-12)."
    spans = extract_qft(text).spans
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    for before, after in zip(spans, spans[1:], strict=False):
        assert before.end <= after.start


def test_spans_for_finds_where_a_year_came_from():
    focus = extract_aft("The crisis began in 2008 and the 2008-2010 slump followed.")
    assert [s.text for s in focus.spans_for(2009)] == ["2008-2010"]


def test_offsets_hold_for_text_whose_lower_case_changes_length():
    text = "İstanbul grew in the 1990s."  # "İ".lower() is two characters
    s = only_span(text)
    assert text[s.start : s.end] == "1990s" == s.text


def test_offsets_hold_across_line_breaks_tabs_and_quotes():
    text = 'Notes:\n\t"the 1990s"\n(WWII)\r\nmid-2019'
    focus = extract_qft(text)
    assert [s.text for s in focus.spans] == ["1990s", "WWII", "2019"]
    assert all(text[s.start : s.end] == s.text for s in focus.spans)


# ---------------------------------------------------------------------------------------------
# reference dates


@pytest.mark.parametrize(
    "value",
    [dt.date(2020, 6, 1), dt.datetime(2020, 6, 1, 23, 59), "2020-06-01", " 2020-06-01 ", "2020-06-01T10:00:00"],
)
def test_reference_date_accepts_dates_datetimes_and_iso_strings(value):
    assert parse_reference_date(value) == dt.date(2020, 6, 1)


def test_reference_date_none_is_none():
    assert parse_reference_date(None) is None


@pytest.mark.parametrize("value", ["", "yesterday", "2020-13-01", "2020/06/01", "06-01-2020", "2020-6-1"])
def test_reference_date_rejects_strings_that_are_not_iso_dates(value):
    with pytest.raises(ValueError, match="reference_date"):
        parse_reference_date(value)


@pytest.mark.parametrize("value", [2020, 2020.0, True, [2020, 6, 1], b"2020-06-01"])
def test_reference_date_rejects_other_types(value):
    with pytest.raises(TypeError, match="reference_date"):
        parse_reference_date(value)


def test_extract_rejects_a_bad_reference_date():
    with pytest.raises(ValueError, match="reference_date"):
        extract_qft("last year", "last tuesday")
    with pytest.raises(TypeError, match="reference_date"):
        FocusTimeExtractor(reference_date=2020)


def test_the_per_call_reference_date_overrides_the_constructors():
    extractor = FocusTimeExtractor(reference_date="2020-06-01")
    assert extractor.extract("last year").years == {2019}
    assert extractor.extract("last year", reference_date=dt.date(2010, 1, 1)).years == {2009}
    assert extractor.extract("last year").reference_year == 2020


def test_the_reference_year_is_recorded_on_the_focus_time():
    assert extract_qft("the 1990s", "2024-06-15").reference_year == 2024
    assert extract_qft("the 1990s").reference_year is None


def test_without_a_reference_date_results_do_not_depend_on_today():
    text = "Last year, two years ago, recently, yesterday, this decade and the '20s."
    first = extract_qft(text)
    assert first.years == span(1920, 1929)  # only the two-digit decade, in the 1900s
    assert extract_qft(text) == first
    source = inspect.getsource(extract_module)
    assert "today()" not in source and ".now(" not in source


# ---------------------------------------------------------------------------------------------
# inputs and options


@pytest.mark.parametrize("value", [None, 2020, b"in 2020", ["in 2020"]])
def test_non_string_text_is_a_type_error(value):
    with pytest.raises(TypeError, match="text must be a str"):
        extract_qft(value)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_or_blank_text_gives_an_empty_focus_time(text):
    focus = extract_qft(text, REF)
    assert isinstance(focus, FocusTime)
    assert focus.years == set() and focus.spans == [] and focus.text == text


def test_the_three_entry_points_share_one_extractor():
    text = "From 2008 to 2010, the '90s, last year and the Cold War."
    assert extract_qft(text, REF) == extract_dft(text, REF) == extract_aft(text, REF)
    assert extract_module._default_extractor() is extract_module._default_extractor()


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_span_years": 0}, ValueError),
        ({"max_span_years": "300"}, TypeError),
        ({"max_span_years": True}, TypeError),
        ({"languages": "en"}, TypeError),
        ({"languages": None}, TypeError),
        ({"periods": [("Jazz Age", (1920, 1929))]}, TypeError),
        ({"periods": {"Jazz Age": (1929, 1920)}}, ValueError),
        ({"periods": {"Jazz Age": 1920}}, TypeError),
        ({"periods": {"#hashtag": (2020, 2020)}}, ValueError),
    ],
)
def test_bad_options_raise_with_a_clear_error(kwargs, error):
    with pytest.raises(error):
        FocusTimeExtractor(**kwargs)


def test_periods_extend_the_table_case_insensitively_as_whole_words():
    extractor = FocusTimeExtractor(periods={"Brexit transition": (2020, 2020), "Jazz Age": (1919, 1929)})
    assert extractor.extract("During the BREXIT TRANSITION.").years == {2020}
    assert extractor.extract("Jazz age music").years == span(1919, 1929)  # overrides 1920-1929
    assert extractor.extract("Brexit transitions were long.").years == set()  # whole words only
    assert extractor.extract("World War II").years == span(1939, 1945)  # defaults stay
    assert extract_qft("During the Brexit transition.").years == set()  # the default is untouched


def test_a_period_override_replaces_every_spelling_of_its_name():
    extractor = FocusTimeExtractor(periods={"world war ii": (1937, 1945)})
    assert extractor.extract("World War II").years == span(1937, 1945)
    assert extractor.extract("World-War-II").years == span(1937, 1945)
    assert extractor.extract("WWII").years == span(1939, 1945)  # another name, kept


def test_every_default_period_is_found_by_its_own_name():
    extractor = FocusTimeExtractor()
    for name, (first, last) in DEFAULT_PERIODS.items():
        focus = extractor.extract(f"It was the time of {name}.")
        assert focus.spans and focus.spans[0].kind == "period", name
        assert (focus.spans[0].first, focus.spans[0].last) == (first, last), name


def test_period_names_normalise_spaces_hyphens_apostrophes_and_case_in_any_script():
    assert normalize_period_name("The  Great-War") == normalize_period_name("the great war")
    assert normalize_period_name("Thirty Years’ War") == normalize_period_name("thirty years war")
    assert normalize_period_name("Belle Époque") == "belleépoque"
    assert normalize_period_name("Вторая мировая") == "втораямировая"


def test_default_periods_have_sensible_spans():
    for name, (first, last) in DEFAULT_PERIODS.items():
        assert 1 <= first <= last <= 2099, name
        assert normalize_period_name(name)
    assert merge_periods() == dict(DEFAULT_PERIODS)


def test_dateparser_reads_rare_phrasings_relative_to_the_reference_date():
    extractor = FocusTimeExtractor()
    # 2020-01-02 is a Thursday: last Tuesday was 2019-12-31.
    assert extractor.extract("We met last Tuesday.", "2020-01-02").years == {2019}
    assert extractor.extract("A fortnight ago.", "2020-01-05").years == {2019}
    assert extractor.extract("In three weeks.", "2020-12-20").years == {2021}


def test_use_dateparser_false_skips_those_phrasings_and_keeps_the_rest():
    extractor = FocusTimeExtractor(use_dateparser=False)
    # weekdays are resolved natively since issue 12; these phrasings still go to dateparser
    assert extractor.extract("We met the day before yesterday.", "2020-01-01").years == set()
    assert extractor.extract("A fortnight ago.", "2020-01-05").years == set()
    assert extractor.extract("We met last year, in May 2019.", "2020-01-02").years == {2019}


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_extracting_does_not_import_heavy_libraries():
    out = run_python(
        "import sys\n"
        "from tempo_eval.core.extract import extract_qft, FocusTimeExtractor\n"
        "extract_qft('From 2008 to 2010, last year, the 1990s and WWII.', '2024-06-15')\n"
        "FocusTimeExtractor().extract('last Tuesday', '2020-01-02')\n"
        "heavy = ['torch', 'transformers', 'sentence_transformers', 'openai']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert out == "[]"


def test_dateparser_is_imported_only_when_a_phrase_needs_it():
    out = run_python(
        "import sys\n"
        "from tempo_eval.core.extract import FocusTimeExtractor\n"
        "FocusTimeExtractor().extract('From 2008 to 2010, last year and May 2019.', '2024-06-15')\n"
        "FocusTimeExtractor(use_dateparser=False).extract('last Tuesday', '2020-01-02')\n"
        "print('dateparser' in sys.modules)\n"
    )
    assert out == "False"


NOISE_TOKENS = (
    "the 1990s '90s 2008-09 2010-2008 from to between and 19th century mid- early late "
    "last next past this year years decade ago a two 12 March May 2019 2020-03-12 12/03/2020 "
    "$2,000 1500 employees km page room No. AD BC 476 9/11 WWII World War II the Great War "
    "( ) \" ' - – — / . , ; \n İ é 0 00 99 2099 2100 9999 fortnight Tuesday in In since"
)


def test_extraction_never_fails_on_noisy_text():
    rng = random.Random(20240615)
    tokens = NOISE_TOKENS.split(" ")
    extractor = FocusTimeExtractor(reference_date="2024-06-15")
    for _ in range(400):
        text = "".join(rng.choice(tokens) + rng.choice(["", " ", " ", "-", "\n"]) for _ in range(30))
        focus = extractor.extract(text)
        for s in focus.spans:
            assert text[s.start : s.end] == s.text
            assert 1 <= s.first <= s.last <= 2099


def test_the_default_extractor_is_built_once_when_threads_ask_for_it_together(monkeypatch) -> None:
    import threading
    import time

    builds = []

    class Slow(extract_module.FocusTimeExtractor):
        def __init__(self) -> None:
            builds.append(1)
            time.sleep(0.05)  # long enough for the other threads to arrive meanwhile
            super().__init__()

    monkeypatch.setattr(extract_module, "FocusTimeExtractor", Slow)
    monkeypatch.setattr(extract_module, "_default", None)
    got = []
    threads = [threading.Thread(target=lambda: got.append(extract_module._default_extractor())) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and len({id(g) for g in got}) == 1
