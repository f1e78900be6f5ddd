//! The fast path against the general path: a batch parsed every way the parsers offer (fast,
//! general path alone, in parallel, in given-back buffers) must give the same tensors or the same
//! error.

use crate::error::Result;
use crate::parse::example::total_bytes;
use crate::parse::{Buffers, ExampleParser, SequenceExampleParser, example, row_budget, sequence};

/// `a` and `b` are the same result: equal tensors (compared through `Debug`, so that NaNs
/// compare equal) or the same error message.
fn same_result<T: std::fmt::Debug>(what: &str, a: &crate::Result<T>, b: &crate::Result<T>) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
        _ => panic!("{what}: fast {a:?} vs general {b:?}"),
    }
}

thread_local! {
    /// The buffers of every batch the tests below parsed before on this thread, whatever its
    /// spec: `parse_reusing` must give the same tensors with them as without.
    static SPENT: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::new());
}

/// Parses `batch` with [`SPENT`]'s buffers, and gives the tensors back to it.
fn parse_with_spent<T: Clone>(
    parse: impl FnOnce(&mut Buffers) -> Result<T>,
    give_back: impl FnOnce(&mut Buffers, T),
) -> Result<T> {
    SPENT.with_borrow_mut(|spent| {
        let out = parse(spent);
        if let Ok(t) = &out {
            give_back(spent, t.clone());
        }
        out
    })
}

/// Parses `batch` with the fast path and with the general path alone; they must agree. Whether
/// the batch parsed.
pub(super) fn example_paths_agree(parser: &ExampleParser, batch: &[Vec<u8>]) -> bool {
    let fast = parser.parse(batch);
    let general = example::parse_run(&parser.plan, batch, 0, false, &mut Buffers::new())
        .and_then(|bufs| parser.finish(bufs, batch.len(), total_bytes(batch), &mut Buffers::new()));
    same_result(&format!("{batch:x?}"), &fast, &general);
    let parallel = parser.parse_parallel(batch, 2);
    same_result("parse_parallel", &parallel, &general);
    let reusing = parse_with_spent(|b| parser.parse_reusing(batch, b), Buffers::give_back);
    same_result("parse_reusing", &reusing, &general);
    fast.is_ok()
}

/// As [`example_paths_agree`], for `SequenceExample`s.
pub(super) fn sequence_paths_agree(parser: &SequenceExampleParser, batch: &[Vec<u8>]) -> bool {
    let fast = parser.parse(batch);
    let budget = row_budget(total_bytes(batch));
    let general = sequence::parse_batch(
        &parser.context,
        &parser.lists,
        batch,
        budget,
        false,
        &mut Buffers::new(),
    );
    same_result(&format!("{batch:x?}"), &fast, &general);
    let reusing = parse_with_spent(
        |b| parser.parse_reusing(batch, b),
        |b, (ctx, lists, lengths)| {
            b.give_back(ctx);
            b.give_back(lists);
            b.give_back(lengths);
        },
    );
    same_result("parse_reusing", &reusing, &general);
    fast.is_ok()
}
