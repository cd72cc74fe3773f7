//! The `tracing` layer: every span the prover opens becomes a timeline [`Span`] — its kind
//! from the span's name, its identity (job, partition, worker, device) from its fields or
//! its nearest ancestor's, every other field an argument — sent to the writer thread when
//! it opens and when it closes.

use std::sync::Arc;

use timeline::event::{Span, SpanKind};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::{Msg, Shared, CTX};

/// The `tracing` layer. Install it with [`EventSink::dispatch`].
#[derive(Clone)]
pub struct TimelineLayer {
    pub(crate) shared: Arc<Shared>,
}

struct Partial(Span);

struct FieldVisitor<'a>(&'a mut Span);

impl FieldVisitor<'_> {
    fn put(&mut self, field: &Field, v: serde_json::Value) {
        let as_u32 = |v: &serde_json::Value| v.as_u64().and_then(|x| u32::try_from(x).ok());
        match field.name() {
            "job" => self.0.job = Some(v.as_str().map(Into::into).unwrap_or_else(|| v.to_string().into())),
            "partition" => self.0.partition = as_u32(&v),
            "worker" => self.0.worker = as_u32(&v),
            "device" => self.0.device = as_u32(&v),
            name => {
                self.0.args.insert(name.to_string(), v);
            }
        }
    }
}

impl Visit for FieldVisitor<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, format!("{value:?}").into());
    }
}

impl<S> Layer<S> for TimelineLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut s = Span::new(attrs.metadata().name().parse().unwrap_or(SpanKind::Other(String::new())), 0, 0);
        s.end_ns = None;
        // Identity inherited from the nearest ancestor that has one.
        if let Some(parent) = span.parent() {
            if let Some(p) = parent.extensions().get::<Partial>() {
                s.job = p.0.job.clone();
                s.partition = p.0.partition;
                s.worker = p.0.worker;
                s.device = p.0.device;
            }
        }
        attrs.record(&mut FieldVisitor(&mut s));
        s.start_ns = self.shared.now_ns();
        if attrs.metadata().name() != CTX {
            let _ = self.shared.tx.send(Msg::Open(s.clone()));
            if let Ok(mut m) = self.shared.open.lock() {
                m.insert(id.into_u64(), s.clone());
            }
        }
        span.extensions_mut().insert(Partial(s));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(p) = span.extensions_mut().get_mut::<Partial>() {
                values.record(&mut FieldVisitor(&mut p.0));
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let end = self.shared.now_ns();
        let Some(span) = ctx.span(&id) else { return };
        if span.name() == CTX {
            return;
        }
        let Some(Partial(mut s)) = span.extensions_mut().remove::<Partial>() else { return };
        let was_open = self.shared.open.lock().map(|mut m| m.remove(&id.into_u64()).is_some()).unwrap_or(true);
        if !was_open {
            // Already written as open by an abort.
            return;
        }
        s.end_ns = Some(end.max(s.start_ns));
        let _ = self.shared.tx.send(Msg::Close(s));
    }
}
