//! Which failed writes a fleet hub refuses for one object alone (its ResourceQuota is full, an
//! admission policy or the schema rejects that object), as opposed to failures every other call
//! would share (unreachable, credentials, RBAC, no namespace): the hub writer
//! ([`crate::runtime::hub_writes`]) goes on with the other objects after the former and stops the
//! pass at the latter.

/// Why the hub refused one object's write, when it refused that object only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A ResourceQuota of the namespace is full (`403`, `exceeded quota: <name>, ...`): no new
    /// object fits until others go; updates of existing ones still do.
    QuotaFull,
    /// An admission policy or webhook, or the CRD's schema, rejects this object (`403`, `400`,
    /// `413`, `422` naming the object's problem).
    Object,
}

/// The admission policy that refuses an agent's writes where no ResourceQuota bounds them
/// (config/acm/limits/admission-policy.yaml): a refusal of every write, not of one object.
pub const QUOTA_REQUIRED_POLICY: &str = "update-status-hub-quota-required";

/// Whether `e` refuses one object only (`None`: a failure every other call would share).
pub fn refusal(e: &kube::Error) -> Option<Refusal> {
    let kube::Error::Api(s) = e else {
        return None;
    };
    if s.message.contains(QUOTA_REQUIRED_POLICY) {
        return None;
    }
    match s.code {
        403 if s.message.contains("exceeded quota") => Some(Refusal::QuotaFull),
        403 if s.message.contains("denied request") || s.message.contains("denied the request") => {
            Some(Refusal::Object)
        }
        400 | 413 | 422 => Some(Refusal::Object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: message.into(),
            ..Default::default()
        }))
    }

    #[test]
    fn refusals_of_one_object_are_told_from_failures_of_all() {
        // As the API server words them.
        assert_eq!(
            refusal(&status(
                403,
                "updateinsights.update.openshift.io \"a\" is forbidden: exceeded quota: update-status, requested: count/updateinsights.update.openshift.io=1, used: count/updateinsights.update.openshift.io=4, limited: count/updateinsights.update.openshift.io=4"
            )),
            Some(Refusal::QuotaFull)
        );
        assert_eq!(
            refusal(&status(
                403,
                "updateinsights.update.openshift.io \"a\" is forbidden: ValidatingAdmissionPolicy 'update-status-hub-copies' with binding 'update-status-hub-copies' denied request: no finalizers"
            )),
            Some(Refusal::Object)
        );
        assert_eq!(
            refusal(&status(
                403,
                "admission webhook \"x.example.com\" denied the request: no"
            )),
            Some(Refusal::Object)
        );
        for code in [400, 413, 422] {
            assert_eq!(
                refusal(&status(code, "invalid")),
                Some(Refusal::Object),
                "{code}"
            );
        }
        // Every write fails alike: RBAC, no quota at all, no namespace, the server.
        for (code, message) in [
            (
                403,
                "updateinsights.update.openshift.io is forbidden: User \"x\" cannot create resource",
            ),
            (
                422,
                "updateinsights.update.openshift.io \"n\" is forbidden: ValidatingAdmissionPolicy 'update-status-hub-quota-required' with binding 'update-status-hub-quota-required' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
            ),
            (404, "namespaces \"c1\" not found"),
            (500, "etcdserver: request timed out"),
            (401, "Unauthorized"),
        ] {
            assert_eq!(refusal(&status(code, message)), None, "{message}");
        }
    }
}
