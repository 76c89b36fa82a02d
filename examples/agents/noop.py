"""Does nothing and prints nothing: the agent the CLI tests run when only the harness's
own checks matter (the overhead bench uses a shell one-liner instead)."""
