"""Reaching a Dask cluster: the one connection the runner (playing chunks on workers) and the
analysis (reading a run's pieces on workers) both open.

Kept out of the runner so that the statistics layer can use a cluster without importing the
runner (the layers are in ``.importlinter``). dask is imported only when a cluster is asked for:
``import distributed`` takes 0.6 s more than the rest (measured), and most commands never use it.
"""
from __future__ import annotations

import asyncio

from .manifest import RunError


def _probe_scheduler(address: str, seconds: float) -> None:
    """Ask the scheduler who it is, over one plain connection, before any Client exists: a
    Client that fails to connect lingers and spends 20 s closing at exit, with a traceback."""
    from distributed.comm import connect  # lazy: distributed takes 0.6 s to import (measured; see the module)

    async def identity():
        comm = await connect(address, timeout=seconds)
        try:
            await comm.write({"op": "identity", "reply": True})
            reply = await comm.read()
        finally:
            comm.abort()
        if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
            raise OSError("it did not answer as a Dask scheduler")

    asyncio.run(asyncio.wait_for(identity(), seconds))


def connect_scheduler(address: str, timeout: str | float = "10s"):
    """A dask.distributed client, or a RunError naming the address that did not answer."""
    try:                    # lazy: distributed, 0.6 s (measured), as in _probe_scheduler
        from dask.distributed import Client
        from dask.utils import parse_timedelta
    except ImportError:
        raise RunError("--backend dask needs dask.distributed: pip install 'dask[distributed]'") from None
    seconds = parse_timedelta(timeout)
    try:
        _probe_scheduler(address, seconds)
        return Client(address, timeout=timeout, set_as_default=False)
    except TimeoutError:
        raise RunError(f"cannot reach the Dask scheduler at {address}: no answer within {seconds:g} s") from None
    except Exception as exc:  # OSError / TimeoutError (no answer), ValueError (bad address), ...
        raise RunError(f"cannot reach the Dask scheduler at {address}: "
                       f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
