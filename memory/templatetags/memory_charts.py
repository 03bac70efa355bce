"""How the Memory tab's activity chart is drawn: stacked bars in an inline SVG, laid out here from
the plain numbers `people_selectors.runs_per_day` reads. The colours are the stylesheet's
(`svg.chart .seg-<series>` in static/css/app.css, from its CSS variables), never set here."""

from dataclasses import dataclass, field

from django import template

register = template.Library()

WIDTH = 320  # the plot, in SVG units
Y_AXIS = 28  # left of the plot: the y axis and its numbers
HEIGHT = 110
AXIS_ROOM = 18  # under the bars: the day labels
SERIES = ("added", "replaced", "removed", "failed")  # bottom to top


@dataclass
class ChartLayout:
    days: list
    width: int = WIDTH
    height: int = HEIGHT
    bars: list[dict] = field(default_factory=list)

    full_width: int = WIDTH + Y_AXIS
    y_axis: int = Y_AXIS
    plot_height: int = HEIGHT - AXIS_ROOM
    label_y: int = HEIGHT - 5

    @property
    def peak(self) -> int:
        return max((day.total for day in self.days), default=0)

    @property
    def totals(self) -> dict:
        return {name: sum(getattr(day, name) for day in self.days) for name in SERIES}


@register.simple_tag
def runs_chart(days) -> ChartLayout:
    """`{% runs_chart chart_days as chart %}`: each day a bar of stacked segments, scaled to the
    busiest day, with its date under the first, middle and last bars."""
    chart = ChartLayout(days=list(days))
    count = len(chart.days)
    if not count:
        return chart
    peak = max(chart.peak, 1)
    plot_height, slot = chart.plot_height, WIDTH / count
    for index, day in enumerate(chart.days):
        y = plot_height
        segments = []
        for name in SERIES:
            value = getattr(day, name)
            if not value:
                continue
            h = max(1.0, value * plot_height / peak)
            y -= h
            segments.append({"name": name, "value": value, "y": round(y, 1), "h": round(h, 1)})
        chart.bars.append(
            {
                "x": round(index * slot + 1.5, 1),
                "w": round(slot - 3, 1),
                "day": day,
                "segments": segments,
                "label": day.day.strftime("%-d %b") if index in (0, count // 2, count - 1) else "",
            }
        )
    return chart
