"""Figures of netdyn's results, with matplotlib (an optional dependency: ``pip install
"netdyn[plot]"``), imported only when a figure is drawn.

```python
import netdyn as nd

fig = nd.plot.fit_figure(history, target, fc_fit, fc_heldout, title="rww on hcp")
fig.savefig("fit.png")   # a matplotlib Figure, or None without matplotlib
```
"""

from .fit_figure import fit_figure as fit_figure

__all__ = ["fit_figure"]
