//! The README's `console` blocks are real: every `$ robolog …` command is run with the built
//! binary from the workspace root, and its output (stdout and stderr) must be what the README
//! shows. Files the README writes under `/tmp/` go to a temporary folder instead.

use std::path::Path;
use std::process::Command;

/// (command, expected output) for each `$ ` line of each console block.
fn console_commands(readme: &str) -> Vec<(String, String)> {
    let mut commands = Vec::new();
    for block in readme.split("```console\n").skip(1) {
        let block = format!("\n{}", block.split("```").next().unwrap());
        for part in block.split("\n$ ").skip(1) {
            let (command, output) = part.split_once('\n').unwrap();
            // The output's last newline was eaten by the split of the next command.
            let output = if output.is_empty() || output.ends_with('\n') {
                output.to_owned()
            } else {
                format!("{output}\n")
            };
            commands.push((command.to_owned(), output));
        }
    }
    commands
}

#[test]
fn readme_commands_print_what_the_readme_shows() {
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("skipping: no bash");
        return;
    }
    let root = robolog_testkit::testdata::workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let commands = console_commands(&readme);
    assert!(commands.len() >= 15, "{}", commands.len());
    let binary = Path::new(env!("CARGO_BIN_EXE_robolog"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = tempfile::tempdir().unwrap();
    let tmp_prefix = format!("{}/", tmp.path().display());
    let mut wrong = Vec::new();
    for (command, expected) in &commands {
        assert!(command.starts_with("robolog "), "{command}");
        let command = command.replace("/tmp/", &tmp_prefix);
        let expected = expected.replace("/tmp/", &tmp_prefix);
        let output = Command::new("bash")
            .arg("-c")
            .arg(format!("{{ {command}; }} 2>&1"))
            .env("PATH", &path)
            .current_dir(&root)
            .output()
            .unwrap();
        let actual = String::from_utf8(output.stdout).unwrap();
        if actual != expected {
            wrong.push(format!(
                "$ {command}\n--- README\n{expected}--- actual\n{actual}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
