// The Finance app of the model corpus: its model is Models/Finance.yaml, generated into this
// module by the build plugin (`StrataModel`), as in a user's own target.
import Strata
