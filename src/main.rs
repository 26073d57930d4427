fn main() {
    std::process::exit(tabula::cli::main());
}
