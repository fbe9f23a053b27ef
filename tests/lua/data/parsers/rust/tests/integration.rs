#[test]
fn regression_r1() { assert!(calc::add(2, 2) == 4); }
#[test]
fn regression_r2() { panic!("boom"); }
