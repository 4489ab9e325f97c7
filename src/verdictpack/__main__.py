from verdictpack._cli import entry

entry()
