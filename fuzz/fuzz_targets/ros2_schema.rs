//! robolog-msg: ROS 2 schemas (`ros2msg` and `ros2idl`, the IDL parser) and the RIHS01 hashes
//! of every type they define.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_msg::Registry;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // A message, a service event (the .srv and IDL service paths) and an action type name.
    for schema_name in [
        "fuzz_pkg/msg/Top",
        "fuzz_pkg/srv/Top_Event",
        "fuzz_pkg/action/Top_FeedbackMessage",
    ] {
        for encoding in ["ros2msg", "ros2idl"] {
            let Ok(registry) = Registry::from_ros2_schema(schema_name, encoding, &text) else {
                continue;
            };
            for message in registry.messages() {
                let _ = registry.dependencies(&message.name);
                let _ = registry.type_hash(&message.name);
                let _ = message.canonical_text();
            }
            for service in registry.services() {
                let _ = registry.service_type_hash(&service.name);
            }
            for action in registry.actions() {
                let _ = registry.action_type_hash(&action.name);
            }
        }
    }
});
