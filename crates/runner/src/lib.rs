//! Running measurements: the plan of a `tlsmatrix run` (scenarios, pairs, passes, lanes and
//! duets), starting the drivers for each group of cells, the memory weather read between
//! passes, writing every finished cell to the results file and the history database, and
//! the same for BoGo's conformance suite, and the wire model's tables and its check through
//! the delay proxy. The command line parses arguments and calls in here.

pub mod compare;
pub mod conformance;
pub mod groups;
pub mod lanes;
pub mod progress;
pub mod quic_check;
pub mod repeatability;
pub mod run;
pub mod settle;
pub mod weather;
pub mod wire;
