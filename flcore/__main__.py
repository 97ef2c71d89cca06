from flcore.cli.main import main

raise SystemExit(main())
