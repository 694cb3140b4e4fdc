//! `robolog`: inspect, print, convert, check, recover and merge robot logs.

#![forbid(unsafe_code)]

fn main() {
    std::process::exit(2);
}
