//! Which endpoints the counting pass keeps per-endpoint figures for: the
//! reported ones only, so that its state grows with the endpoints reported,
//! not with the distinct ones.

use crate::events::Id;

/// Which endpoints get per-endpoint figures.
#[derive(Debug, Clone)]
pub struct Detail {
    /// `slots[e]`: endpoint `e`'s place in `endpoints`, or [`NOT_DETAILED`].
    slots: Vec<u32>,
    /// The detailed endpoints.
    endpoints: Vec<Id>,
}

/// The slot of an endpoint without per-endpoint figures.
const NOT_DETAILED: u32 = u32::MAX;

impl Detail {
    /// Every one of `endpoints` endpoints.
    pub fn all(endpoints: usize) -> Detail {
        Detail {
            slots: (0..endpoints as u32).collect(),
            endpoints: (0..endpoints as Id).collect(),
        }
    }

    /// These of `endpoints` endpoints.
    pub fn only(detailed: Vec<Id>, endpoints: usize) -> Detail {
        let mut slots = vec![NOT_DETAILED; endpoints];
        for (slot, &e) in detailed.iter().enumerate() {
            slots[e as usize] = slot as u32;
        }
        Detail {
            slots,
            endpoints: detailed,
        }
    }

    /// The detailed endpoints, in slot order.
    pub fn endpoints(&self) -> &[Id] {
        &self.endpoints
    }

    pub(super) fn slot(&self, endpoint: Id) -> Option<u32> {
        let slot = self.slots[endpoint as usize];
        (slot != NOT_DETAILED).then_some(slot)
    }
}
