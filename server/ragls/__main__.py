from ragls.cli import main

raise SystemExit(main())
