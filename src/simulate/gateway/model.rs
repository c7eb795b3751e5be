//! One policy rule as a gateway enforces it ([`Model`]), made by
//! [`Gateway::model`].

use super::engine::Engine;
use super::{Gateway, kong};
use crate::simulate::spec::AlgorithmKind;

/// One policy rule as a gateway enforces it: ready to replay.
#[derive(Debug, Clone)]
pub struct Model {
    pub(super) gateway: Gateway,
    pub(super) kind: AlgorithmKind,
    pub(super) engine: Engine,
    pub(super) parameters: String,
    /// Whether rejected requests reach the engine (see [`Model::ignoring_rejections`]).
    pub(super) sees_rejections: bool,
}

impl Model {
    /// The gateway.
    pub fn gateway(&self) -> Gateway {
        self.gateway
    }

    /// The policy rule's algorithm (what the gateway's configuration converts).
    pub fn kind(&self) -> AlgorithmKind {
        self.kind
    }

    /// The gateway parameters the rule converts to, in one line.
    pub fn parameters(&self) -> &str {
        &self.parameters
    }

    /// The same model with rejected requests leaving the state alone, as if
    /// the gateway did not count them: what `export --check` compares with to
    /// tell counted rejections from other differences.
    pub fn ignoring_rejections(&self) -> Model {
        Model {
            sees_rejections: false,
            ..self.clone()
        }
    }

    /// The one Kong plugin that takes the smallest limits of `models` (Kong's
    /// models of one policy's rules, the first the plugin's own), as the
    /// exporter merges rules; `None` unless every model is Kong's.
    pub fn kong_merged(models: &[&Model]) -> Option<Model> {
        let windows: Vec<&kong::Windows> = (models.iter())
            .map(|m| match &m.engine {
                Engine::Kong(w) => Some(w),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let merged = kong::Windows::merged(&windows);
        Some(Model {
            engine: Engine::Kong(merged.clone()),
            parameters: merged.describe(),
            ..(*models.first()?).clone()
        })
    }

    /// Whether admitted requests may be held (nginx, Traefik).
    pub fn reports_delays(&self) -> bool {
        matches!(self.engine, Engine::Nginx(_) | Engine::Traefik(_))
    }
}
