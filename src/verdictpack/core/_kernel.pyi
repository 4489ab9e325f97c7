"""Type stub of the compiled batch engine (src/verdictpack/_kernel.c; private)."""

from typing import Any

from numpy.typing import NDArray

Buffer = NDArray[Any]

def layout(ispec: Buffer, /) -> dict[str, int]: ...
def init(fspec: Buffer, ispec: Buffer, state: Buffer, /) -> None: ...
def step(
    fspec: Buffer,
    ispec: Buffer,
    state: Buffer,
    idx: Buffer,
    act: Buffer,
    moved: Buffer,
    searches: Buffer,
    /,
) -> None: ...
def run(
    fspec: Buffer,
    ispec: Buffer,
    state: Buffer,
    model: Buffer,
    human: Buffer,
    cap: int,
    codes: Buffer,
    searches: Buffer,
    /,
) -> None: ...
def trace(
    fspec: Buffer,
    ispec: Buffer,
    state: Buffer,
    model: Buffer,
    human: Buffer,
    present: Buffer,
    out: Buffer,
    searches: Buffer,
    /,
) -> None: ...
def log_e(
    fspec: Buffer, ispec: Buffer, state: Buffer, j: int, side: int, m: Buffer, out: Buffer, /
) -> None: ...
def libm(which: int, x: Buffer, out: Buffer, /) -> None: ...
def plug_observe(
    values: Buffer,
    xi: Buffer,
    bets: Buffer,
    t: Buffer,
    sums: Buffer,
    devs: Buffer,
    counts: Buffer,
    b: Buffer,
    kp: Buffer,
    ks: Buffer,
    wg: Buffer,
    gg: Buffer,
    lam: Buffer,
    logw: Buffer,
    n: int,
    j: int,
    logc: float,
    cap: float,
    horizon: float,
    blend: bool,
    rows: Buffer,
    vidx: Buffer,
    moved: Buffer,
    /,
) -> None: ...
def plug_log_e(
    values: Buffer,
    xi: Buffer,
    bets: Buffer,
    t: Buffer,
    sums: Buffer,
    devs: Buffer,
    counts: Buffer,
    b: Buffer,
    kp: Buffer,
    ks: Buffer,
    wg: Buffer,
    gg: Buffer,
    lam: Buffer,
    logw: Buffer,
    n: int,
    j: int,
    logc: float,
    cap: float,
    blend: bool,
    side: int,
    m: Buffer,
    out: Buffer,
    /,
) -> None: ...
