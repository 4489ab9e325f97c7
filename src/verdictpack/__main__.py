from verdictpack._cli import main

raise SystemExit(main())
