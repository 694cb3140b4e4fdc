//! Parsing the fixture bundles, computing their md5sums and writing their bundles back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robolog_msg::{Dialect, Registry, TypeName};
use robolog_testkit::testdata;

fn fixtures() -> Vec<(TypeName, String)> {
    testdata::files_with_extension("msg", ".msgdef")
        .iter()
        .map(|path| {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let split = stem
                .char_indices()
                .find(|&(i, c)| c == '_' && stem[i + 1..].starts_with(|u: char| u.is_uppercase()))
                .unwrap()
                .0;
            let name = TypeName::new(&stem[..split], &stem[split + 1..]).unwrap();
            (name, std::fs::read_to_string(path).unwrap())
        })
        .collect()
}

fn definitions(c: &mut Criterion) {
    let fixtures = fixtures();
    let bytes: usize = fixtures.iter().map(|(_, text)| text.len()).sum();
    let mut group = c.benchmark_group("fixtures");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("parse bundle", |b| {
        b.iter(|| {
            for (name, text) in &fixtures {
                black_box(Registry::from_bundle(name, text, Dialect::Ros1).unwrap());
            }
        });
    });
    group.bench_function("parse bundle + md5", |b| {
        b.iter(|| {
            for (name, text) in &fixtures {
                let registry = Registry::from_bundle(name, text, Dialect::Ros1).unwrap();
                black_box(registry.md5(name).unwrap());
            }
        });
    });
    let registries: Vec<(TypeName, Registry)> = fixtures
        .iter()
        .map(|(name, text)| {
            (
                name.clone(),
                Registry::from_bundle(name, text, Dialect::Ros1).unwrap(),
            )
        })
        .collect();
    group.bench_function("md5 of a parsed registry", |b| {
        b.iter(|| {
            for (name, registry) in &registries {
                black_box(registry.md5(name).unwrap());
            }
        });
    });
    group.bench_function("write bundle", |b| {
        b.iter(|| {
            for (name, registry) in &registries {
                black_box(registry.bundle_text(name).unwrap());
            }
        });
    });
    group.finish();
}

criterion_group!(benches, definitions);
criterion_main!(benches);
