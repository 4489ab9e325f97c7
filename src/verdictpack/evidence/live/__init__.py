"""verdictpack.evidence.live: judges asked live over OpenAI-compatible endpoints.

A narrow stack, each layer replaceable in tests: ``_transport`` (the :class:`Transport`
interface, the httpx implementation behind the ``live`` extra, a mock for unit tests, and the
exception tree of live I/O), ``_retry`` (exponential backoff with jitter honouring Retry-After),
``_limits`` (per-endpoint concurrency and request rate), ``_profiles`` (each server's quirks:
where logprobs live, which structured-output option it takes), ``_prompts`` (the templates and
their rendering in both presentation orders), ``_extract`` (the choice, in a declared order of
preference: logprobs, structured output, a strict parser; else invalid) and ``_prices``. The
evidence ledger that makes a live study resumable sits beside this package
(:mod:`verdictpack.evidence._ledger`). May import the foundations, ``core``, ``config``,
``stimuli`` and ``evidence``; httpx only lazily, inside the transport.
"""
