//! Panics that are answers, not crashes: kube-core's structural rewriter and serde_derive's
//! attribute parser report some inputs by panicking. [`quietly`] catches such a panic and
//! keeps it from being printed, on its own thread only.

/// Runs `f` with its panics caught and not printed: `f`'s value, or the panic's message.
pub fn quietly<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_quiet_hook();
    let was_quiet = QUIET.replace(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.set(was_quiet);
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic in the schema transforms".into())
    })
}

thread_local! {
    /// Whether this thread is inside [`quietly`], whose panics are expected.
    pub(super) static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn install_quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                prev(info);
            }
        }));
    });
}
