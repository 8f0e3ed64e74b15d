//! Webhooks for kinds of API version `{{ version }}`.

// +kubebuilder:scaffold:webhook-kinds
