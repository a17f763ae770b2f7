int rg_scan_version(void) { return 1; }
