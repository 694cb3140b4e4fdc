//! robolog-cdr: compile a plan from a ROS 2 definition, then decode (lenient and strict),
//! encode, project and render message bytes with it.
//!
//! Input: `<type name>\n<definition bundle>\0<message bytes>` (the message starts with its
//! encapsulation header).
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_cdr::{Encapsulation, Error, Plan, Tree};
use robolog_fuzz::split_at_nul;

fuzz_target!(|data: &[u8]| {
    let (text, message) = split_at_nul(data);
    let (type_name, definition) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(plan) = Plan::from_bundle(type_name, definition) else {
        return;
    };
    let _ = plan.min_size();

    if let Ok(decoded) = plan.decode(message) {
        let _ = decoded.to_json();
        let _ = decoded.warning();
        for field in decoded.root().fields() {
            let _ = field.value();
            let _ = decoded.get(field.name());
        }
        // Encoding what was decoded works (unless a bound lenient decoding let through is
        // exceeded), and decoding that strictly gives the same bytes again.
        match decoded.encode() {
            Ok(encoded) => match plan.decode_strict(&encoded) {
                Ok(again) => assert_eq!(
                    again.encode().ok(),
                    Some(encoded),
                    "encode is not a fixed point"
                ),
                Err(e) => panic!("re-decoding our own encoding failed: {e}"),
            },
            Err(Error::BoundExceeded { .. }) => {}
            Err(e) => panic!("a decoded message does not encode: {e}"),
        }
        // The other byte order holds the same values.
        let other = match decoded.encapsulation() {
            Encapsulation::CdrLe => Encapsulation::CdrBe,
            _ => Encapsulation::CdrLe,
        };
        if let Ok(swapped) = plan.encode_as(decoded.tree(), other) {
            let again = plan.decode_strict(&swapped).expect("our own encoding decodes");
            assert_eq!(again.tree().root_fields().len(), decoded.tree().root_fields().len());
        }
    }
    let _ = plan.decode_strict(message);
    let mut tree = Tree::new();
    let _ = plan.decode_into(message, &mut tree);

    let names: Vec<&str> = plan.field_names().collect();
    for name in &names {
        if let Ok(projection) = plan.projection(&[name]) {
            let _ = projection.extract(message);
        }
    }
    if let Ok(projection) = plan.projection(&names) {
        let _ = projection.extract(message);
    }
});
