//! robolog-msg: every entry point that takes definition text, in each dialect.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_msg::{
    Bundle, ParseDialect, Registry, TypeName, detect_dialect, parse_action, parse_message,
    parse_service,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(top) = "fuzz_pkg/Top".parse::<TypeName>() else {
        return;
    };
    let _ = detect_dialect(&text);
    let bundle = Bundle::parse(&text);
    let _ = bundle.dependencies.len();
    // Forcing each dialect fuzzes both parsers on every input; `Auto` covers detection.
    for dialect in [ParseDialect::Ros1, ParseDialect::Ros2] {
        if let Ok(message) = parse_message(&top, &text, dialect) {
            let _ = message.canonical_text();
        }
    }
    let _ = parse_service(&top, &text, ParseDialect::Auto);
    let _ = parse_action(&top, &text, ParseDialect::Auto);
    if let Ok(registry) = Registry::from_bundle(&top, &text, ParseDialect::Auto) {
        if registry.dependencies(&top).is_ok() {
            let _ = registry.md5(&top);
            let _ = registry.md5_text(&top);
            let _ = registry.bundle_text(&top);
        }
        for message in registry.messages() {
            let _ = message.canonical_text();
        }
    }
    // A name taken from the input exercises the name rules too.
    if let Some(line) = text.lines().next() {
        let _ = line.parse::<TypeName>();
    }
});
