"""verdictpack.verify: the self-audit, the seal test and the one-command reproduction.

The self-audit re-derives every headline number of output folders by a second, independent
method, so it imports only the foundations (``verdictpack._errors``, ...), never the code it
checks. The seal test and the reproduction run the installed command line in subprocesses.
"""
