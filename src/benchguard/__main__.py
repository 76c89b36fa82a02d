from benchguard.cli import main

main()
