"""Writing an output folder atomically: everything or nothing.

Files are rendered into a temporary folder beside the target and moved into place with one rename,
so an interrupted or refused run never leaves a half-written folder. A non-empty target is refused
unless ``force`` is given; with ``force`` the old folder is replaced as a whole.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from verdictpack._errors import OutputError

__all__ = ["write_outputs"]


def write_outputs(out_dir: str | Path, files: Mapping[str, str | bytes], *, force: bool) -> Path:
    """Write ``files`` (relative name -> text or bytes) as the folder ``out_dir``."""
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{target}: exists and is not a folder; expected an output folder path")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise OutputError(
            f"{target}: folder is not empty; expected an empty or new folder (use --force to "
            "replace it)"
        )
    parent = target.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
    except OSError as exc:
        raise OutputError(f"{target}: cannot create the output folder ({exc.strerror})") from None
    try:
        for name, content in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            path.write_bytes(data)
        os.chmod(tmp, 0o755)
        if target.is_dir():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=parent))
            old.rmdir()
            os.rename(target, old)
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(f"{target}: cannot write the output folder ({exc.strerror})") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target
