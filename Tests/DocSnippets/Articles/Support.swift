// What the docs' snippets call without showing: a screen to show results on, a banner.
import Strata

func show<Item, Section>(_ snapshot: ResultsSnapshot<Item, Section>) { print(snapshot) }

func show<Item, Section>(_ update: ResultsUpdate<Item, Section>) { print(update.snapshot) }

func animate<Item, Section>(_ batch: ChangeBatch, to snapshot: ResultsSnapshot<Item, Section>) {
    print(batch, snapshot)
}

func showBanner(_ text: String) { print(text) }
