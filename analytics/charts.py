"""Charts drawn on the server as SVG shapes (no script, no CDN): the geometry of bar
charts, which the dashboard's template turns into <rect> and <text> elements."""

from dataclasses import dataclass, field

WIDTH = 720
BAR_HEIGHT = 18
LABEL_WIDTH = 160


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    label: str
    value: float


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"


@dataclass
class Chart:
    width: int
    height: int
    bars: list[Bar] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (colour, name)

    @property
    def empty(self) -> bool:
        return not any(bar.value for bar in self.bars)


# Colours with enough contrast on white, told apart without relying on hue alone.
PALETTE = ["#417690", "#79aec8", "#2e7d32", "#c62828", "#6a1b9a", "#ef6c00", "#5d4037"]


def grouped_columns(groups: list[tuple[str, list[float]]], series: list[str]) -> Chart:
    """Vertical bars: for each group (a day) one bar per series, scaled to the highest."""
    height, top, bottom = 240, 10, 40
    plot = height - top - bottom
    highest = max((value for _, values in groups for value in values), default=0) or 1
    step = (WIDTH - 40) / max(len(groups), 1)
    bar_width = max(1.0, step * 0.8 / max(len(series), 1))
    chart = Chart(WIDTH, height, legend=list(zip(PALETTE, series, strict=False)))
    chart.labels.append(Label(4, top + 10, f"{highest:g}"))
    every = max(1, len(groups) // 10)  # at most about ten day labels
    for index, (name, values) in enumerate(groups):
        left = 40 + index * step
        for n, value in enumerate(values):
            size = plot * value / highest
            chart.bars.append(
                Bar(
                    x=round(left + n * bar_width, 1),
                    y=round(top + plot - size, 1),
                    width=round(bar_width, 1),
                    height=round(size, 1),
                    colour=PALETTE[n % len(PALETTE)],
                    label=f"{name} {series[n]}: {value:g}",
                    value=value,
                )
            )
        if index % every == 0:
            chart.labels.append(Label(round(left, 1), height - bottom + 16, name))
    return chart


def horizontal_bars(
    rows: list[tuple[str, float]], *, unit: str = "", colour: str | None = None
) -> Chart:
    """One horizontal bar per row, its value written after it; in `colour` (a funnel's
    steps) or each its own (categories, people)."""
    gap = 8
    height = max(1, len(rows)) * (BAR_HEIGHT + gap) + gap
    highest = max((value for _, value in rows), default=0) or 1
    room = WIDTH - LABEL_WIDTH - 80
    chart = Chart(WIDTH, height)
    for index, (name, value) in enumerate(rows):
        y = gap + index * (BAR_HEIGHT + gap)
        size = room * value / highest
        chart.bars.append(
            Bar(
                x=LABEL_WIDTH,
                y=y,
                width=round(size, 1),
                height=BAR_HEIGHT,
                colour=colour or PALETTE[index % len(PALETTE)],
                label=f"{name}: {value:g}{unit}",
                value=value,
            )
        )
        chart.labels.append(Label(LABEL_WIDTH - 6, y + 13, name[:28], anchor="end"))
        chart.labels.append(Label(round(LABEL_WIDTH + size + 6, 1), y + 13, f"{value:g}{unit}"))
    return chart
