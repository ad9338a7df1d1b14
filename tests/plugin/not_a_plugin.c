int not_a_gscheck_plugin(void) { return 0; }
