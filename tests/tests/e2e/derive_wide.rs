//! A derived struct of 300 features, wider than the one-pass walk's limit: it decodes by the
//! general path alone, with the values and errors of a narrow struct.

use tfrecord_core::proto::tensorflow::{self as tf, feature::Kind};
use tfrecord_core::{Decode, Encode, Example, Message, TfExample};

/// A struct of one `i64` field per name.
macro_rules! wide {
    ($($f:ident)*) => {
        #[derive(Example, Debug, Default, PartialEq)]
        struct Wide {
            $($f: i64,)*
        }

        /// Field `i` holds `i * 7 - 1000`.
        fn sample() -> Wide {
            let mut i = 0i64;
            Wide { $($f: { i += 1; (i - 1) * 7 - 1000 },)* }
        }
    };
}

wide!(f0 f1 f2 f3 f4 f5 f6 f7 f8 f9 f10 f11 f12 f13 f14 f15 f16 f17 f18 f19 f20 f21 f22 f23 f24 f25 f26 f27 f28 f29 f30 f31 f32 f33 f34 f35 f36 f37 f38 f39 f40 f41 f42 f43 f44 f45 f46 f47 f48 f49 f50 f51 f52 f53 f54 f55 f56 f57 f58 f59 f60 f61 f62 f63 f64 f65 f66 f67 f68 f69 f70 f71 f72 f73 f74 f75 f76 f77 f78 f79 f80 f81 f82 f83 f84 f85 f86 f87 f88 f89 f90 f91 f92 f93 f94 f95 f96 f97 f98 f99 f100 f101 f102 f103 f104 f105 f106 f107 f108 f109 f110 f111 f112 f113 f114 f115 f116 f117 f118 f119 f120 f121 f122 f123 f124 f125 f126 f127 f128 f129 f130 f131 f132 f133 f134 f135 f136 f137 f138 f139 f140 f141 f142 f143 f144 f145 f146 f147 f148 f149 f150 f151 f152 f153 f154 f155 f156 f157 f158 f159 f160 f161 f162 f163 f164 f165 f166 f167 f168 f169 f170 f171 f172 f173 f174 f175 f176 f177 f178 f179 f180 f181 f182 f183 f184 f185 f186 f187 f188 f189 f190 f191 f192 f193 f194 f195 f196 f197 f198 f199 f200 f201 f202 f203 f204 f205 f206 f207 f208 f209 f210 f211 f212 f213 f214 f215 f216 f217 f218 f219 f220 f221 f222 f223 f224 f225 f226 f227 f228 f229 f230 f231 f232 f233 f234 f235 f236 f237 f238 f239 f240 f241 f242 f243 f244 f245 f246 f247 f248 f249 f250 f251 f252 f253 f254 f255 f256 f257 f258 f259 f260 f261 f262 f263 f264 f265 f266 f267 f268 f269 f270 f271 f272 f273 f274 f275 f276 f277 f278 f279 f280 f281 f282 f283 f284 f285 f286 f287 f288 f289 f290 f291 f292 f293 f294 f295 f296 f297 f298 f299);

#[test]
fn a_struct_wider_than_the_one_pass_walk_reads_and_writes_as_a_narrow_one() {
    let w = sample();
    let bytes = Encode::<TfExample>::encode_to_vec(&w);
    // The record as protobuf reads it: one int64 feature per field.
    let e = tf::Example::decode(&bytes[..]).expect("protobuf reads it");
    let features = e.features.expect("features").feature;
    assert_eq!(features.len(), 300);
    for i in 0..300i64 {
        let kind = features[&format!("f{i}")].kind.clone();
        assert_eq!(
            kind,
            Some(Kind::Int64List(tf::Int64List {
                value: vec![i * 7 - 1000]
            }))
        );
    }
    assert_eq!(
        <Wide as Decode<TfExample>>::decode(&bytes).expect("decodes"),
        w
    );
    let mut into = Wide::default();
    <Wide as Decode<TfExample>>::decode_into(&mut into, &bytes).expect("decodes into");
    assert_eq!(into, w);

    // A missing feature and one of another kind: errors naming the key, as for a narrow struct.
    let mut missing = tf::Example {
        features: Some(tf::Features {
            feature: features.clone(),
        }),
    };
    missing
        .features
        .as_mut()
        .expect("features")
        .feature
        .remove("f123");
    let err = <Wide as Decode<TfExample>>::decode(&missing.encode_to_vec()).expect_err("missing");
    assert_eq!(err.key(), Some("f123"), "{err}");
    let mut floats = features;
    floats.insert(
        "f7".into(),
        tf::Feature {
            kind: Some(Kind::FloatList(tf::FloatList { value: vec![1.0] })),
        },
    );
    let wrong = tf::Example {
        features: Some(tf::Features { feature: floats }),
    };
    let err = <Wide as Decode<TfExample>>::decode(&wrong.encode_to_vec()).expect_err("a float");
    assert_eq!(err.key(), Some("f7"), "{err}");
    assert!(
        err.to_string()
            .contains("expected int64_list, found float_list"),
        "{err}"
    );
}
