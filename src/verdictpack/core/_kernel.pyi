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
def logs(x: Buffer, out: Buffer, /) -> None: ...
