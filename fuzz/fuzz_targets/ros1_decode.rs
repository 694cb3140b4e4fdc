//! robolog-ros1: compile a plan from a definition, then decode, encode, project and render
//! message bytes with it.
//!
//! Input: `<type name>\n<definition bundle>\0<message bytes>`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_fuzz::split_at_nul;
use robolog_ros1::{Plan, Tree};

fuzz_target!(|data: &[u8]| {
    let (text, message) = split_at_nul(data);
    let (type_name, definition) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(plan) = Plan::from_bundle(type_name, definition) else {
        return;
    };
    let _ = plan.fixed_size();
    let _ = plan.min_size();

    if let Ok(decoded) = plan.decode(message) {
        let _ = decoded.to_json();
        for field in decoded.root().fields() {
            let _ = field.value();
            let _ = decoded.get(field.name());
        }
        // Encoding what was decoded must work, and decoding that must give the same bytes
        // again (the first pass may normalise scalar bools).
        let Ok(encoded) = decoded.encode() else {
            panic!("a decoded message does not encode");
        };
        match plan.decode_strict(&encoded) {
            Ok(again) => assert_eq!(
                again.encode().ok(),
                Some(encoded),
                "encode is not a fixed point"
            ),
            Err(e) => panic!("re-decoding our own encoding failed: {e}"),
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
