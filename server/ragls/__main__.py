from ragls.frontends.cli.main import main

raise SystemExit(main())
