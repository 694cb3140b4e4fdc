//! S3 credentials, region and endpoint from the AWS shared files (`~/.aws/credentials` and
//! `~/.aws/config`, or the files `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` name), for
//! the profile `AWS_PROFILE` names (`default` without it): `object_store` reads only
//! environment variables, which still win over the files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use object_store::aws::AmazonS3Builder;

/// The settings of one profile the files give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Profile {
    pub(crate) access_key_id: Option<String>,
    pub(crate) secret_access_key: Option<String>,
    pub(crate) session_token: Option<String>,
    pub(crate) region: Option<String>,
    pub(crate) endpoint_url: Option<String>,
}

/// The sections of an INI file and their `key = value` pairs. Comments (`#`, `;`) and lines
/// that are neither are skipped; a key repeated in a section keeps its last value; keys are
/// lower-cased, values trimmed.
pub(crate) fn parse_ini(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_owned();
            sections.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(section), Some((key, value))) = (&current, line.split_once('=')) {
            sections
                .entry(section.clone())
                .or_default()
                .insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    sections
}

/// Profile `name` from the texts of the credentials and config files: keys from the
/// credentials file's `[name]` win over the config file's `[profile name]` (`[default]` for
/// the default profile, which may also be written `[profile default]`).
pub(crate) fn profile(credentials: &str, config: &str, name: &str) -> Profile {
    let credentials = parse_ini(credentials);
    let config = parse_ini(config);
    let empty = BTreeMap::new();
    let from_credentials = credentials.get(name).unwrap_or(&empty);
    let prefixed = format!("profile {name}");
    let from_config = config
        .get(&prefixed)
        .or_else(|| (name == "default").then(|| config.get("default")).flatten())
        .unwrap_or(&empty);
    let get = |key: &str| {
        from_credentials
            .get(key)
            .or_else(|| from_config.get(key))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    Profile {
        access_key_id: get("aws_access_key_id"),
        secret_access_key: get("aws_secret_access_key"),
        session_token: get("aws_session_token"),
        region: get("region"),
        endpoint_url: get("endpoint_url"),
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The file an environment variable names, else `~/.aws/<name>`.
fn file(variable: &str, name: &str) -> Option<PathBuf> {
    var(variable)
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|home| home.join(".aws").join(name)))
}

/// The profile the environment selects, from the files (missing files give nothing).
fn load() -> Profile {
    let read = |path: Option<PathBuf>| {
        path.and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    };
    let name = var("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
    profile(
        &read(file("AWS_SHARED_CREDENTIALS_FILE", "credentials")),
        &read(file("AWS_CONFIG_FILE", "config")),
        &name,
    )
}

/// `builder` with what the files give and the environment does not.
pub(crate) fn apply(mut builder: AmazonS3Builder) -> AmazonS3Builder {
    let profile = load();
    if var("AWS_ACCESS_KEY_ID").is_none()
        && let (Some(key), Some(secret)) = (profile.access_key_id, profile.secret_access_key)
    {
        builder = builder
            .with_access_key_id(key)
            .with_secret_access_key(secret);
        if let Some(token) = profile.session_token {
            builder = builder.with_token(token);
        }
    }
    if var("AWS_REGION").is_none()
        && var("AWS_DEFAULT_REGION").is_none()
        && let Some(region) = profile.region
    {
        builder = builder.with_region(region);
    }
    if var("AWS_ENDPOINT").is_none()
        && var("AWS_ENDPOINT_URL").is_none()
        && let Some(endpoint) = profile.endpoint_url
    {
        // An endpoint the user names in plain HTTP (a local store) is allowed as named.
        if endpoint.starts_with("http://") {
            builder = builder.with_allow_http(true);
        }
        builder = builder.with_endpoint(endpoint);
    }
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREDENTIALS: &str = "\
# keys
[default]
aws_access_key_id = AKIDEFAULT
aws_secret_access_key = secret-default

[fleet]
aws_access_key_id=AKIFLEET
aws_secret_access_key=secret-fleet
aws_session_token = token-fleet
region = eu-west-1
";

    const CONFIG: &str = "\
[default]
region = us-east-2
; a comment
[profile fleet]
region = eu-central-1
endpoint_url = http://127.0.0.1:9000
[profile other]
region = ap-south-1
aws_access_key_id = AKIOTHER
aws_secret_access_key = secret-other
";

    #[test]
    fn sections_keys_and_values() {
        let ini = parse_ini("[a]\nK = v = w \n junk\n[b c]\nx=\n[a]\nk=again\n");
        assert_eq!(ini["a"]["k"], "again");
        assert_eq!(ini["b c"]["x"], "");
        assert_eq!(ini.len(), 2);
        assert!(parse_ini("key = before any section\n").is_empty());
    }

    #[test]
    fn the_default_profile() {
        let p = profile(CREDENTIALS, CONFIG, "default");
        assert_eq!(p.access_key_id.as_deref(), Some("AKIDEFAULT"));
        assert_eq!(p.secret_access_key.as_deref(), Some("secret-default"));
        assert_eq!(p.region.as_deref(), Some("us-east-2"));
        assert_eq!((p.session_token, p.endpoint_url), (None, None));
    }

    #[test]
    fn a_named_profile_credentials_file_first() {
        let p = profile(CREDENTIALS, CONFIG, "fleet");
        assert_eq!(p.access_key_id.as_deref(), Some("AKIFLEET"));
        assert_eq!(p.session_token.as_deref(), Some("token-fleet"));
        // The credentials file says eu-west-1, the config file eu-central-1.
        assert_eq!(p.region.as_deref(), Some("eu-west-1"));
        assert_eq!(p.endpoint_url.as_deref(), Some("http://127.0.0.1:9000"));
    }

    #[test]
    fn a_profile_only_in_the_config_file_and_one_nowhere() {
        let p = profile(CREDENTIALS, CONFIG, "other");
        assert_eq!(p.access_key_id.as_deref(), Some("AKIOTHER"));
        assert_eq!(p.region.as_deref(), Some("ap-south-1"));
        assert_eq!(profile(CREDENTIALS, CONFIG, "missing"), Profile::default());
        // `[other]` in the config file is not the profile `other` (it needs `profile `).
        assert_eq!(
            profile("", "[other]\nregion = x\n", "other"),
            Profile::default()
        );
    }
}
