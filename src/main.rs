//! `scarp`: the command line. Entry point only: the commands live in `scarp::cli`.

fn main() {
    scarp::cli::main();
}
