"""The activity chart's drawing (memory.templatetags.memory_charts): stacked bars scaled to the
busiest day, dated under the first, middle and last; colours left to the stylesheet."""

from datetime import date, timedelta

from django.template import Context, Template

from memory.store.people import ChartDay
from memory.templatetags.memory_charts import runs_chart


def days(*counts) -> list[ChartDay]:
    first = date(2026, 11, 1)
    return [ChartDay(first + timedelta(days=i), *c) for i, c in enumerate(counts)]


def test_bars_stack_their_series_bottom_up_scaled_to_the_busiest_day():
    chart = runs_chart(days((0, 0, 0, 0), (2, 1, 0, 1), (4, 0, 0, 0)))
    assert chart.peak == 4 and chart.totals == {"added": 6, "replaced": 1, "removed": 0, "failed": 1}
    empty, mixed, busiest = chart.bars
    assert empty["segments"] == []
    assert [s["name"] for s in mixed["segments"]] == ["added", "replaced", "failed"]
    assert busiest["segments"][0]["h"] == chart.plot_height and busiest["segments"][0]["y"] == 0
    tops = [s["y"] for s in mixed["segments"]]
    assert tops == sorted(tops, reverse=True)  # each segment sits on the one before
    assert [bar["label"] for bar in chart.bars] == ["1 Nov", "2 Nov", "3 Nov"]


def test_the_layout_holds_no_colour_and_the_svg_none_either():
    chart = runs_chart(days(*[(1, 1, 1, 1)] * 30))
    assert all(set(s) == {"name", "value", "y", "h"} for bar in chart.bars for s in bar["segments"])
    assert [bar["label"] != "" for bar in chart.bars].count(True) == 3
    svg = Template("{% include 'memory/_chart.html' %}").render(Context({"chart_days": days(*[(1, 2, 3, 4)] * 30)}))
    assert 'class="seg seg-failed"' in svg and "#" not in svg.split("<svg", 1)[1].split("</svg>")[0]


def test_no_days_draws_an_empty_chart():
    chart = runs_chart([])
    assert chart.bars == [] and chart.peak == 0
