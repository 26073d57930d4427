//! A game record: read, and when it reads, written and read back the same.
#![no_main]

use tabula::game::record::Record;

libfuzzer_sys::fuzz_target!(|text: &str| {
    if let Ok(r) = Record::parse(text) {
        let again = Record::parse(&r.to_text()).expect("a record written reads back");
        assert_eq!(again.to_text(), r.to_text());
    }
});
