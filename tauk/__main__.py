from tauk.cli import main

raise SystemExit(main())
