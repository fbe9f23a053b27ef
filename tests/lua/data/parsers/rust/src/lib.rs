pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    #[test]
    fn adds() { assert_eq!(super::add(1, 1), 2); }
    #[test]
    fn subtracts() { assert_eq!(super::add(1, -1), 1, "wrong"); }
    #[test]
    #[ignore]
    fn slow() {}
    #[test]
    #[should_panic]
    fn panics() { panic!("expected"); }
}
