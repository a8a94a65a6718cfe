//! Running measurements: the plan of a `tlsmatrix run` (scenarios, pairs, passes, lanes and
//! duets), starting the drivers for each group of cells, the memory weather read between
//! passes, writing every finished cell to the results file and the history database, and
//! the same for BoGo's conformance suite. The command line parses arguments and calls in here.

pub mod conformance;
pub mod groups;
pub mod lanes;
pub mod progress;
pub mod run;
pub mod weather;
