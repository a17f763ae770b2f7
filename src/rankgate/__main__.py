from rankgate.cli import main

main()
