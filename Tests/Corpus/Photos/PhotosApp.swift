// The Photos app of the model corpus: its model is Models/Photos.yaml, generated into this
// module by the build plugin (`StrataModel`), as in a user's own target.
import Strata
